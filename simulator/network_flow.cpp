// network_flow.cpp: placeholder registered in CMake; filled by its owner this session.
