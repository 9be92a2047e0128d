"""n8n's Simple Memory: per-workflow-session sliding windows with idle expiry."""
