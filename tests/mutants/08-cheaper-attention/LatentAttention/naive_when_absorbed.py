# absorbed=True rebuilds every token's keys and values as the naive form does: right outputs, not the stated bound.
# replace: if not absorbed:
# with: if True:
