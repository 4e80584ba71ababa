# The command and its task over the real profiler (tick source on the fake CPU), the network faked.
test_cmd_profile_stream_SRCS := $(CMD_PROFILE_SRCS)
