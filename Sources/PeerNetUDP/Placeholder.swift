// Placeholder: replaced as the PeerNetUDP target is written.
