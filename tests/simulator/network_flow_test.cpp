// network_flow_test.cpp: placeholder registered in CMake; filled by its owner this session.
