"""Source of truth: the plan pushed into NetBox or Nautobot, diffed against it, and its facts pulled back.

mapping.py builds the provider-neutral objects (objects.py) from the plan; engine.py compares them
with what a provider reads and writes the difference under the ownership rule; providers/ holds
one thin module per server kind; facts.py is the table of which field flows which way and the
facts file the plan honours; cli.py is `fabricgen sot`.  docs/sot.md describes it all.
"""
