"""Summarizer backends: extractive (offline) and the optional LLM providers."""
