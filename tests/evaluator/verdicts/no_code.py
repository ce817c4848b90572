# task: Activation/gelu
# expect: NO_CODE
# reason: defines no function
# A response whose code block held only prose and constants.
BLOCK = 1024
