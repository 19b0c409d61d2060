"""Rule family placeholder: filled in by its issue."""
RULES: list = []
