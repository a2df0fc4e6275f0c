"""Views: kubectl-style text, matplotlib figures, ipywidgets. Views read records; they never drive
the simulation."""
