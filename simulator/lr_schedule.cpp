// lr_schedule.cpp: placeholder registered in CMake; filled by its owner this session.
