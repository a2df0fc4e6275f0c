"""Control plane: apiserver store with watches, event recorder, trace, and the simulation."""
