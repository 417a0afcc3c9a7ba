"""The Neel-Roth-Wu game (docs/privacy.md §3-§7): its plan, its players and its run."""
