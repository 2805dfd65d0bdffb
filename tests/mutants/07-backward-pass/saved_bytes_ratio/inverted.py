# Divides the other way: flash_attention's bytes over plain attention's.
# replace: saved_bytes_ratio = plain_bytes / flash_bytes
# with: saved_bytes_ratio = flash_bytes / plain_bytes
