// Placeholder: replaced as the EggSim target is written.
