"""fabricgen: one declarative intent -> every config of a lossless RoCEv2 AI back-end fabric.

The pipeline is visible in the package layout:

    intent.py     load and validate the YAML intent (pydantic)
    topology.py   switches, ports, links, GPU attachments, cabling/optics
    underlay.py   loopbacks, /31s, ASNs, BGP sessions, ECMP
    qos.py        PFC / ECN / headroom / watchdog / NIC settings
    plan.py       chain of the steps above -> a fully resolved, vendor-neutral Plan
    render.py     Plan -> vendor configs via thin Jinja2 templates
    deploy.py     nornir + napalm push (dry-run diff first)
    validate.py   live state vs intent
"""

__version__ = "0.1.0"
