"""Exchange labels, one module per family of drivers: the name each exchange is written under and a rule finds
it by (`log.get(label)`). A label that ends in a number or a binding is a prefix (`*_PREFIX`)."""
