"""RockBot's file layouts: long-term memories and working memory as JSON files in a directory."""
