// Placeholder: replaced as the Consensus target is written.
