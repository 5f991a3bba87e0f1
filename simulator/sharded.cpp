// sharded.cpp: placeholder registered in CMake; filled by its owner this session.
