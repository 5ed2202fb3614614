"""Analysis of a planned fabric: what it does to collective traffic.

`fabric.from_plan` is the one adapter that reads the plan; every analysis
(ECMP collisions, failure impact, PFC deadlock) and the diagram and docs read
only the compact `Fabric` it returns.

Real switch ASIC hash functions and their seeding are proprietary: the hashes
here (crc16, crc32, xor) are models of the kind ASICs use, good for comparing
designs and settings, not for predicting one packet's exact path.
"""
