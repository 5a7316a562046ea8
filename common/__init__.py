"""Small pieces every package shares: the error tree and validated identifiers."""
