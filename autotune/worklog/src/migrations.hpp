// One function per schema version; schema.cpp lists them in order.
#pragma once
#include "kiln/worklog/sqlite.hpp"

namespace kiln::worklog::schema {

void create_version_1(const sqlite::Database& db);
void create_version_2(const sqlite::Database& db);
void create_version_3(const sqlite::Database& db);
void create_version_4(const sqlite::Database& db);
void create_version_5(const sqlite::Database& db);
void create_version_6(const sqlite::Database& db);
void create_version_7(const sqlite::Database& db);
void create_version_8(const sqlite::Database& db);

}  // namespace kiln::worklog::schema
