# Splits W x into heads the wrong way: view(N, out_dim, num_heads), so head h takes every num_heads-th column.
# replace: z = self.W(x).view(n, self.num_heads, self.out_dim)
# with: z = self.W(x).view(n, self.out_dim, self.num_heads).transpose(1, 2)
