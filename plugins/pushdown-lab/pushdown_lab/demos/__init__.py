"""The demo commands: one spec applied to a throwaway server of each backend, read back and shown."""
