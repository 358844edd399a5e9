package detect

// ReadGeneric is the generic reader alone, for the corpus tests.
var ReadGeneric = readGeneric
