"""Render: the plan through each platform's renderer into a checked, hashed build directory."""
