"""airace: an agent-based model of the AI infrastructure race."""

__version__ = "0.1.0"
