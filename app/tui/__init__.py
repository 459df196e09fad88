"""The Textual application: screens, messages and rendering of the model into Rich text."""
