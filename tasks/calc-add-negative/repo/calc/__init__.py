def add(a, b):
    if b < 0:
        return a - b   # the bug: negative numbers are subtracted
    return a + b
