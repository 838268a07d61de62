"""offsim package."""
