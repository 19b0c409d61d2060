"""torch-migrate: move legacy PyTorch training code to modern idioms, and prove nothing changed."""
__version__ = "0.1.0"
