0 1
1 2
# unweighted
3 1
