/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The agent of a credit hop (--mode credit): speaks the RSVP of
 * draft-hu-rtgwg-cbfc-rsvp-01 with its neighbours (docs/rsvp.md), decides
 * each flow's credit and path in lh_cr_grant, holds what the program hands
 * it and sends it when credit allows, returns credit upstream as the program
 * counts bytes forwarded, fails over when a next hop stops answering.
 */
#ifndef LONGHAULD_CREDIT_H
#define LONGHAULD_CREDIT_H

#include "config.h"
#include "datapath.h"

/* Run until *stop becomes non-zero; returns EXIT_OK or EXIT_KERNEL */
int lhd_credit_run(const struct lhd_config *cfg, struct lhd_datapath *dp, volatile int *stop);

#endif /* LONGHAULD_CREDIT_H */
