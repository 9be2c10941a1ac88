"""The production profile (issue 18, docs/deployment.md): checking a Dagster instance configuration
before use (``check``) and the run launcher whose workers run monitoring can check (``launcher``).
Importing the package imports neither (the launcher pulls in Dagster's launcher machinery)."""
