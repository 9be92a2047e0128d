"""The services over the tiers: the memory's construction, dream passes, lifecycle,
transfer.
"""
