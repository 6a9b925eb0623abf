// Placeholder: replaced as the EggGame target is written.
