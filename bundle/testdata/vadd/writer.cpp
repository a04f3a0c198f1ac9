// writer kernel (test fixture: the loader only reads it)
