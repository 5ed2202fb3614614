"""fabricgen's NX-OS and Arista EOS deploy drivers (napalm's own drivers with owned-section candidates,
``napalm_nxos_fabricgen`` / ``napalm_eos_fabricgen``); what they share is ``fabricgen.owned_sections``.

The FRR and SONiC drivers are napalm community packages of their own: ``napalm_frr`` and
``napalm_sonic``; the SSH command transport every Linux-shell driver runs on is ``fabricgen.ssh``.
"""
