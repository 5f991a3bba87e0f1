// measurement_import_test.cpp: placeholder registered in CMake; filled by its owner this session.
