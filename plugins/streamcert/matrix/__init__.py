"""The interoperability matrix (docs/matrix.md): servers × bindings and clients × recorded servers, each cell one
`streamcert run` in a process of its own, merged into matrix.json and one dashboard."""
