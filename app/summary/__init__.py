"""Branch summaries: collection and preparation (Pi's rules), token counting, and the summarizer backends."""
