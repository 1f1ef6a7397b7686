"""HTEB and mteb side by side: HTEB data as mteb tasks (`tasks`, `adapter`), mteb's model loaders
as an HTEB encoder (`encoder`), mteb's result folders written (`layout`) and read (`results`)."""
