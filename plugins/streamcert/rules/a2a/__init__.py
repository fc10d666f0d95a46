"""The rules of profile a2a (cases/catalogue/a2a.json): the card and its signatures, the wire and the bindings, errors,
streams, tasks, several clients on one task."""
