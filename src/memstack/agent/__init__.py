"""What an agent's turn uses: the context builder, the agent tools, the LangGraph store's core."""
