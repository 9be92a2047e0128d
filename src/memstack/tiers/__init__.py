"""The tiers: session state, conversations, long-term memory, working memory, shared memory."""
