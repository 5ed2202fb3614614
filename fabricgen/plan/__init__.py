"""The plan: the intent resolved into switches, ports, links, addresses, sessions and QoS, vendor-neutral."""
