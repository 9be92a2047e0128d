"""The doors: the CLI, the HTTP and MCP server, the framework integrations."""
