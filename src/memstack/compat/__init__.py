"""The original systems' compatible APIs: RocketRide's node, RockBot's files, Dify's node memory,
n8n's windows.
"""
