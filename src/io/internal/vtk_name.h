/* vtk_name.h: the rule for VTK array names, which both VTK writers (output.c's legacy files,
 * vtkxml.c's XML ones) apply to the fields they are given. Private to src/io. */
#ifndef MODALLOCO_VTK_NAME_H
#define MODALLOCO_VTK_NAME_H

/* 1 when s is a non-empty run of letters, digits, '_', '-', '.' (a safe VTK array name). */
int mlc_vtk_name_ok(const char *s);

#endif
