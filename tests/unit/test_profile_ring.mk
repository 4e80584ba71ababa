test_profile_ring_SRCS :=
