"""Dialogue: session state and stores, turn classification, clarification,
rewrite, and the turn engine that composes kg and retrieval. Never imports fastapi."""
