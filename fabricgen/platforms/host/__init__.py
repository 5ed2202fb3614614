"""GPU servers: the NIC bring-up script."""
