# Model files (issue 11): the GGUF reader, the safetensors reader (JSON
# through jansson, optional), and the bitsandbytes NF4 conversion; part of
# libqgemv (its public calls are qgemv_model_*).
libqgemv_la_SOURCES += \
	src/model/model.c src/model/model.h \
	src/model/gguf.c \
	src/model/safetensors.c \
	src/model/bnb.c
libqgemv_la_CPPFLAGS += $(JANSSON_CFLAGS)
libqgemv_la_LIBADD += $(JANSSON_LIBS)
