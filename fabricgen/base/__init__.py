"""What every stage uses and that knows nothing of fabrics: process pools, output directories, SSH, templates."""
