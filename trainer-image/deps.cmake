# Packages the trainer targets link. Imported targets are directory-scoped, so every directory
# that links bsw_trainer_base or bsw_trainer_torch includes this file.
find_package(Torch REQUIRED)
find_package(ZLIB REQUIRED)
find_package(PNG REQUIRED)
find_library(TURBOJPEG_LIBRARY NAMES turbojpeg REQUIRED)
